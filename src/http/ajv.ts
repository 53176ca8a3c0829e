import Ajv, { type ValidateFunction } from 'ajv';
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

type RouteSchema = { schema: unknown; httpPart?: string };

/** Request validators by whether they coerce and the schema's text, for the life of the process. */
const compiled = new Map<string, ValidateFunction>();

/**
 * The app's validator compiler: bodies without coercion, the other parts with. A schema already
 * compiled (by this app or an earlier one in the process) is not compiled again: a validator depends
 * only on the schema and the Ajv options. Routes share most schemas (an id in the path on hundreds
 * of routes, the brand routes again under `/admin`): an app has 306 of them but 87 distinct ones,
 * and compiling is most of its start; tests build many apps in one process.
 */
export function requestValidatorCompiler(): (route: RouteSchema) => ValidateFunction {
  const bodyAjv = makeAjv(false);
  const paramAjv = makeAjv(true);
  return ({ schema, httpPart }) => {
    const coerce = httpPart !== 'body';
    const key = `${coerce ? 'coerce' : 'body'} ${JSON.stringify(schema)}`;
    let validate = compiled.get(key);
    if (!validate) {
      validate = (coerce ? paramAjv : bodyAjv).compile(schema as object);
      compiled.set(key, validate);
    }
    return validate;
  };
}
