// `npm run gen:schema`: writes schemas/manifest.schema.json and src/manifest/validate/validator.generated.ts
// from schema.ts (run from dist/ after the build). Tests compare both committed files with what
// these functions make now, so they cannot drift.
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { manifestSchemaText } from "./schema.js";
import { validatorSource } from "./validator-source.js";

// dist/manifest/validate/gen-schema.js -> <package root>/schemas/manifest.schema.json
const root = new URL("../../../", import.meta.url);
writeFileSync(fileURLToPath(new URL("schemas/manifest.schema.json", root)), manifestSchemaText());
writeFileSync(
  fileURLToPath(new URL("src/manifest/validate/validator.generated.ts", root)),
  validatorSource(),
);
