/**
 * The port's in-memory `KeyStore` (`KeyStore.layerMemory`) with keys made and hashed by node:crypto
 * (ApiKeyHash), seeded from configuration: `SPOT_API_KEYS`, comma-separated plain keys, hashed on
 * load and then forgotten.
 */
import { Config, Effect, Layer, Redacted } from "effect"
import { KeyStore } from "@spot/application"
import type { MemoryKeyStoreOptions } from "@spot/application"
import * as ApiKeyHash from "./ApiKeyHash.js"

/** The store with the given seed keys. */
export const layer = (options: Omit<MemoryKeyStoreOptions, "hashing"> = {}): Layer.Layer<KeyStore> =>
  KeyStore.layerMemory({ ...options, hashing: ApiKeyHash.hashing })

/** `SPOT_API_KEYS`: comma-separated plain keys; blanks ignored; absent means no key. */
export const seedKeysConfig: Config.Config<ReadonlyArray<Redacted.Redacted<string>>> = Config.Redacted("SPOT_API_KEYS").pipe(
  Config.map((all) =>
    Redacted.value(all)
      .split(",")
      .map((key) => key.trim())
      .filter((key) => key.length > 0)
      .map((key) => Redacted.make(key, { label: "ApiKey" }))
  ),
  Config.withDefault<ReadonlyArray<Redacted.Redacted<string>>>([])
)

/** The store seeded from `SPOT_API_KEYS`. */
export const layerConfig: Layer.Layer<KeyStore, Config.ConfigError> = Layer.effect(
  KeyStore,
  Effect.flatMap(seedKeysConfig, (seedKeys) => KeyStore.makeMemory({ seedKeys, hashing: ApiKeyHash.hashing }))
)
