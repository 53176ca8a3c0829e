import SerializerSelector from '@fastify/fast-json-stringify-compiler';

type Serializer = SerializerSelector.Serializer;

/** Response serializers by their options and schema's text, for the life of the process. */
const compiled = new Map<string, Serializer>();

/**
 * The JSON text of `value`, or undefined when JSON would lose part of it: a function, a RegExp, a
 * Date or a number JSON cannot write (an Ajv format given as a RegExp, say). Two values that differ
 * only there would share a text, so such a value is never a cache key.
 */
function faithfulJson(value: unknown): string | undefined {
  let lossy = false;
  const text = JSON.stringify(value, function (key, v) {
    const raw = (this as Record<string, unknown>)[key];
    if (
      typeof raw === 'function' ||
      raw instanceof RegExp ||
      raw instanceof Date ||
      (typeof raw === 'number' && !Number.isFinite(raw))
    )
      lossy = true;
    return v;
  });
  return lossy ? undefined : text;
}

/**
 * Fastify's own response serializer compiler (fast-json-stringify), asked once per distinct schema
 * instead of once per route and status. Most of an app's response schemas are the same few error
 * envelopes (each route declares its 401, 403, 404, 429 and 500), and tests build many apps in one
 * process. A serializer depends only on the schema and the options (shared schemas, serializer
 * options), which are part of the key; where their JSON text would not tell two of them apart,
 * nothing is cached and Fastify's compiler answers as it would alone.
 */
export function cachedSerializerFactory(): SerializerSelector.SerializerFactory {
  const fastifyDefault = SerializerSelector();
  return (externalSchemas, serializerOpts) => {
    const compile = fastifyDefault(externalSchemas, serializerOpts);
    const options = faithfulJson([externalSchemas ?? {}, serializerOpts ?? {}]);
    if (options === undefined) return compile;
    return (route) => {
      const schema = faithfulJson(route.schema);
      if (schema === undefined) return compile(route);
      const key = `${options} ${schema}`;
      let serialize = compiled.get(key);
      if (!serialize) {
        serialize = compile(route);
        compiled.set(key, serialize);
      }
      return serialize;
    };
  };
}
