// `npm run gen:schema`: writes schemas/manifest.schema.json from schema.ts (run from dist/ after
// the build). A test compares the committed file with manifestSchemaText(), so it cannot drift.
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { manifestSchemaText } from "./schema.js";

// dist/manifest/gen-schema.js -> <package root>/schemas/manifest.schema.json
const target = fileURLToPath(new URL("../../schemas/manifest.schema.json", import.meta.url));
writeFileSync(target, manifestSchemaText());
