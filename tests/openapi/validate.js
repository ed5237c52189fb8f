// Validates an OpenAPI document (a file, or stdin with "-") with @apidevtools/swagger-parser:
// the OpenAPI 3.1 JSON schema and its $refs.  Exit 0 valid, 1 invalid (the reason on stderr).
"use strict";
const fs = require("fs");
const SwaggerParser = require("@apidevtools/swagger-parser");

const file = process.argv[2] || "-";
const doc = JSON.parse(fs.readFileSync(file === "-" ? 0 : file, "utf8"));
SwaggerParser.validate(doc)
  .then((api) => {
    console.log("valid: OpenAPI %s, %d paths", api.openapi, Object.keys(api.paths).length);
  })
  .catch((err) => {
    console.error("invalid: " + err.message);
    process.exit(1);
  });
