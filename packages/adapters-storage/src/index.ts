/**
 * Storage adapters: key stores (memory with node:crypto hashing, file, PostgreSQL), the event log and
 * the trade archive (PostgreSQL; their memory layers are the ports' own), the database (server or
 * embedded PGlite), engine snapshots (their codec and store), the cursor secret's file, the
 * simulator's warm-up record.
 */
export * as MemoryKeyStore from "./memory/MemoryKeyStore.js"
export * as ApiKeyHash from "./memory/ApiKeyHash.js"
export * as FileKeyStore from "./file/FileKeyStore.js"
export * as DataDirLock from "./file/DataDirLock.js"
export * as FileCursorSecret from "./file/FileCursorSecret.js"
export * as FileWarmUpRecords from "./file/FileWarmUpRecords.js"
export * as PgDatabase from "./pg/PgDatabase.js"
export * as PgEventStore from "./pg/PgEventStore.js"
export * as PgKeyStore from "./pg/PgKeyStore.js"
export * as Migrations from "./pg/Migrations.js"
export * as FileSnapshotStore from "./snapshot/FileSnapshotStore.js"
export * as MemorySnapshotStore from "./snapshot/MemorySnapshotStore.js"
export * as LogIdentityLive from "./snapshot/LogIdentityLive.js"
export * as EngineCodecLive from "./snapshot/EngineCodecLive.js"
export * as EngineSnapshot from "./snapshot/EngineSnapshot.js"
export * as PgTradeStore from "./pg/PgTradeStore.js"
