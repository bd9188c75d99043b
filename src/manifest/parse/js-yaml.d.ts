// The part of js-yaml 4 that parse-yaml.ts uses (the package ships no types). `listener` is an
// option of js-yaml's loader that reports every node as it opens and closes.
declare module "js-yaml" {
  export interface TypeOptions {
    kind: "scalar" | "sequence" | "mapping";
    resolve?: (data: string) => boolean;
    construct?: (data: string) => unknown;
  }
  export class Type {
    constructor(tag: string, options: TypeOptions);
    readonly tag: string;
    resolve(data: string): boolean;
    construct(data: string): unknown;
  }
  export class Schema {
    extend(types: { implicit?: Type[]; explicit?: Type[] }): Schema;
  }
  export const FAILSAFE_SCHEMA: Schema;
  export const types: { readonly null: Type; readonly bool: Type; readonly int: Type; readonly float: Type };
  export interface LoaderState {
    /** Offset in the input: where a node starts on "open". */
    readonly position: number;
    /** The node's value on "close". */
    readonly result: unknown;
  }
  export interface LoadOptions {
    schema?: Schema;
    maxDepth?: number;
    listener?: (event: "open" | "close", state: LoaderState) => void;
  }
  export function load(text: string, options?: LoadOptions): unknown;
}
