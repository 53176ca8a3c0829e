import type { Client } from 'openapi-fetch';
import type { components, operations, paths } from './schema.js';

export type { components, operations, paths };

/** The API's named schemas: `Schemas['App']`, `Schemas['ErrorEnvelope']`, … */
export type Schemas = components['schemas'];

export interface GatehouseClientOptions {
  /** Where Gatehouse answers, for example `https://id.example.com`. */
  baseUrl: string;
  /** A console access token or a user API key (`ghsk_…`), or a function answering one per request. */
  token?: string | (() => string | undefined | Promise<string | undefined>);
  /** Headers sent with every request. */
  headers?: HeadersInit;
  /** A fetch of your own (tests, proxies). */
  fetch?: (input: Request) => Promise<Response>;
}

export type GatehouseClient = Client<paths>;

/** An openapi-fetch client typed by the Gatehouse API's paths. */
export declare function createGatehouseClient(options: GatehouseClientOptions): GatehouseClient;
