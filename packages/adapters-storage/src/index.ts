/** Storage adapters: key stores (memory, file, PostgreSQL), the event log (memory, PostgreSQL), the database (server or embedded PGlite). */
export * as MemoryKeyStore from "./memory/MemoryKeyStore.js"
export * as MemoryEventStore from "./memory/MemoryEventStore.js"
export * as ApiKeyHash from "./memory/ApiKeyHash.js"
export * as FileKeyStore from "./file/FileKeyStore.js"
export * as PgDatabase from "./pg/PgDatabase.js"
export * as PgEventStore from "./pg/PgEventStore.js"
export * as PgKeyStore from "./pg/PgKeyStore.js"
export * as Migrations from "./pg/Migrations.js"
