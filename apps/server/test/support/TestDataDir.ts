/**
 * A data directory of this test file's own (a server locks its data directory, DataDirLock, and
 * test files run in processes of their own at the same time), made on first use and removed after
 * the file's tests by `removeTestDataDir` (registered for every file by `AfterEachFile.ts`: a
 * process "exit" handler does not run when vitest ends its workers, and the directories piled up
 * in the temporary directory, run after run).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

let dataDir: string | undefined

export const testDataDir = (): string => {
  dataDir ??= mkdtempSync(join(tmpdir(), "spot-test-data-"))
  return dataDir
}

export const removeTestDataDir = (): void => {
  if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true })
  dataDir = undefined
}
