/**
 * Port: a simulated market, the service's embedded source of events when no indexer feeds it
 * (`SimulatorFeed` drives it with the clock). A simulation is a function of its settings: the same
 * settings give the same events, ids included, however the caller cuts time into `advance` calls,
 * so a warm-up can be made again and a log's first events recognized.
 */
import { Context } from "effect"
import type { MarketEvent } from "@spot/domain"

export interface SimulationSettings {
  readonly seed: number
  /** ms; the simulated clock starts here. */
  readonly startTime: number
  /** Steady-state swap rate across all chains. */
  readonly tradesPerSecond: number
  /** New tokens per minute across all chains. */
  readonly launchesPerMinute: number
}

/** One running simulation. Pure computation: it reads no clock, its randomness is its seed's. */
export interface SimulatedMarket {
  /** The events after the previous call's time (the start, on the first call) up to `now`, in order. */
  readonly advance: (now: number) => ReadonlyArray<MarketEvent>
}

export interface MarketSimulationShape {
  /** A new simulated market whose clock starts at `settings.startTime`. */
  readonly open: (settings: SimulationSettings) => SimulatedMarket
}

export class MarketSimulation extends Context.Service<MarketSimulation, MarketSimulationShape>()("@spot/application/MarketSimulation") {}
