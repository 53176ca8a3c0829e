import Ajv from 'ajv';
import addFormats from 'ajv-formats';

/** Query strings and params are strings on the wire: coerce them. Bodies are JSON: never coerce. */
export function makeAjv(coerce: boolean) {
  const ajv = new Ajv.default({
    allErrors: true,
    removeAdditional: false,
    useDefaults: true,
    coerceTypes: coerce ? 'array' : false,
    strict: false,
  });
  addFormats.default(ajv);
  return ajv;
}
