import { defineConfig } from "vitest/config"

// vitest 5's failure reporter calls Map.groupBy (Node 21+); these machines run Node 20.
if (typeof (Map as unknown as { groupBy?: unknown }).groupBy !== "function") {
  Object.defineProperty(Map, "groupBy", {
    value: <K, V>(items: Iterable<V>, key: (item: V, index: number) => K): Map<K, Array<V>> => {
      const groups = new Map<K, Array<V>>()
      let i = 0
      for (const item of items) {
        const k = key(item, i++)
        const group = groups.get(k)
        if (group === undefined) groups.set(k, [item])
        else group.push(item)
      }
      return groups
    }
  })
}

export default defineConfig({
  test: {
    projects: ["packages/*", "apps/*"],
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
