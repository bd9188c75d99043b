// `npm run gen:schema` (with manifest/ and project/gen-schema.ts): writes schemas/events.schema.json.
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { eventsSchemaText } from "./events-schema.js";

// dist/events/gen-schema.js -> <package root>/schemas/events.schema.json
writeFileSync(
  fileURLToPath(new URL("../../schemas/events.schema.json", import.meta.url)),
  eventsSchemaText(),
);
