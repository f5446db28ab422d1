/**
 * Use cases and ports. (Started by the HTTP-platform helper with its ports; extend as the use
 * cases land.)
 */
export * from "./auth/index.js"
export * from "./ports/index.js"
export * from "./errors.js"
