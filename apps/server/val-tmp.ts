import { Events, MarketEngine, Simulator } from "@spot/domain"
const sim = new Simulator.MarketSimulator({ seed: 1, startTime: 1_700_000_000_000, tradesPerSecond: 2000, launchesPerMinute: 600 })
const engine = new MarketEngine()
const raws: Array<unknown> = []
for (let s = 1; s < 60; s++) for (const e of sim.advance(1_700_000_000_000 + s * 1000)) { engine.apply(e); raws.push(JSON.parse(Events.marketEventJson(e))) }
console.log("events", raws.length)
for (let r = 0; r < 30; r++) {
  let t0 = performance.now(); const decoded = raws.map((raw) => Events.decodeMarketEventFast(raw)!)
  const tDecode = performance.now() - t0
  t0 = performance.now(); let n = 0
  for (let i = 0; i < raws.length; i++) if (Events.carriesOnlyEventFields(raws[i] as object, decoded[i]!)) n++
  const tCarry = performance.now() - t0
  t0 = performance.now(); for (const e of decoded) engine.check(e)
  const tCheck = performance.now() - t0
  console.log(`decode ${(tDecode * 1000 / raws.length).toFixed(2)} carries ${(tCarry * 1000 / raws.length).toFixed(2)} check ${(tCheck * 1000 / raws.length).toFixed(2)} µs/event`)
}
