/**
 * Typed array parameters for `unnest` inserts: one bind parameter per column whatever the row
 * count, with the element type given (no per-element type inference by the driver).
 */
import { Result } from "effect"
import { PgTypes } from "@effect/sql-pg"

export const textArray = (values: ReadonlyArray<string>): PgTypes.Parameter => Result.getOrThrow(PgTypes.array(values, PgTypes.OID.text))

/** Integers travel as float8 (exact for safe integers, no BigInt per row) and are cast back to int8 in SQL. */
export const float8Array = (values: ReadonlyArray<number>): PgTypes.Parameter => Result.getOrThrow(PgTypes.array(values, PgTypes.OID.float8))
