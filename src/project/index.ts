// What the rest of reel uses of the project: where its state and output live, and its settings.
export {
  type Anchor,
  anchorOf,
  anchorsFrom,
  type AnchorKind,
  checkManifestsAnchor,
  describeAnchor,
  findAnchorAbove,
  startOf,
} from "./anchor.js";
export { type Project, PROJECT_DEFAULTS, PROJECT_FILE_NAME, readProject } from "./project-file.js";
export { ProjectFileError } from "../errors/usage.js";
export { projectSchemaText } from "./project-schema.js";
