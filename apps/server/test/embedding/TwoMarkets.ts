/**
 * Two markets that number their trade feeds' codes differently: each stream's terminals carry its
 * own tag ("a-axiom", "b-axiom"), and its traders are labelled with tagged labels, so the flag lists
 * of its trades are its own. Folded side by side in one process, engines sharing a table of codes
 * would hand one engine's codes to the other's trades; restored from a snapshot in a process that
 * already numbered the other market, such a table no longer means what the snapshot's columns say.
 * Used by two-engines.test.ts and by fold-alone.ts, the script it runs in a separate process.
 */
import type { MarketEngine, MarketEvent } from "@spot/domain"
import * as Simulator from "@spot/simulator"

export const startTime = 1_767_000_000_000
export const minute = 60_000
export const minutes = 2

/** The market `tag` ("a" or "b"): one array of events per simulated minute. */
export const marketMinutes = (tag: string): Array<Array<MarketEvent>> => {
  const simulator = new Simulator.MarketSimulator({ seed: tag === "a" ? 31 : 32, startTime, tradesPerSecond: 10, launchesPerMinute: 12 })
  const labelled = new Set<string>()
  const out: Array<Array<MarketEvent>> = []
  for (let m = 1; m <= minutes; m++) {
    const batch: Array<MarketEvent> = []
    for (const event of simulator.advance(startTime + m * minute)) {
      if (event.type !== "swap") {
        batch.push(event)
        continue
      }
      // every seventh new trader gets a label of this market's own, before its swap
      if (!labelled.has(event.trader) && labelled.size % 7 === 0) {
        batch.push({ type: "walletLabeled", id: `${tag}-label-${labelled.size}`, timestamp: event.timestamp, chain: event.chain, wallet: event.trader, label: `${tag}-desk`, active: true })
      }
      labelled.add(event.trader)
      batch.push(event.terminal === null ? event : { ...event, terminal: `${tag}-${event.terminal}` })
    }
    out.push(batch)
  }
  return out
}

/** Folds one minute as the service does: the batch, its changes drained, the clock moved. */
export const foldMinute = (engine: MarketEngine, events: ReadonlyArray<MarketEvent>, minuteIndex: number): void => {
  for (const event of events) {
    if (engine.apply(event) !== undefined) throw new Error(`event ${event.id} refused`)
  }
  engine.drainChanges()
  engine.advanceTo(startTime + (minuteIndex + 1) * minute)
  engine.drainChanges()
}
