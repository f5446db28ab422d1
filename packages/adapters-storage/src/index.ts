/** Storage adapters: the in-memory key store now; PostgreSQL (server and embedded) next. */
export * as MemoryKeyStore from "./memory/MemoryKeyStore.js"
export * as ApiKeyHash from "./memory/ApiKeyHash.js"
export * as FileKeyStore from "./file/FileKeyStore.js"
