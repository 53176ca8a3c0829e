import SerializerSelector from '@fastify/fast-json-stringify-compiler';

type Serializer = SerializerSelector.Serializer;

/** Response serializers by their options and schema's text, for the life of the process. */
const compiled = new Map<string, Serializer>();

/**
 * Fastify's own response serializer compiler (fast-json-stringify), asked once per distinct schema
 * instead of once per route and status. Most of an app's response schemas are the same few error
 * envelopes (each route declares its 401, 403, 404, 429 and 500), and tests build many apps in one
 * process. A serializer depends only on the schema and the options (shared schemas, serializer
 * options), which are part of the key.
 */
export function cachedSerializerFactory(): SerializerSelector.SerializerFactory {
  const fastifyDefault = SerializerSelector();
  return (externalSchemas, serializerOpts) => {
    const compile = fastifyDefault(externalSchemas, serializerOpts);
    const options = JSON.stringify([externalSchemas ?? {}, serializerOpts ?? {}]);
    return (route) => {
      const key = `${options} ${JSON.stringify(route.schema)}`;
      let serialize = compiled.get(key);
      if (!serialize) {
        serialize = compile(route);
        compiled.set(key, serialize);
      }
      return serialize;
    };
  };
}
