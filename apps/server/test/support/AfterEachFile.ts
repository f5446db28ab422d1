/** Set-up of every test file of the server (vitest `setupFiles`): what a file leaves behind is removed after it. */
import { afterAll } from "vitest"
import { removeTestDataDir } from "./TestDataDir.js"

afterAll(removeTestDataDir)
