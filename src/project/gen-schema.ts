// `npm run gen:schema` (with manifest/validate/gen-schema.ts): writes schemas/project.schema.json from the
// project file's field table. A test compares the committed file with what this makes now.
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { projectSchemaText } from "./project-schema.js";

// dist/project/gen-schema.js -> <package root>/schemas/project.schema.json
writeFileSync(
  fileURLToPath(new URL("../../schemas/project.schema.json", import.meta.url)),
  projectSchemaText(),
);
