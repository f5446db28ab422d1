export * as ApiKey from "./ApiKey.js"
export type { ApiKeyRecord } from "./ApiKey.js"
