import { describe, it } from "@effect/vitest"
import { Arbitrary, Schema } from "effect"
import * as Fixed from "../../../src/Fixed.js"
import { HolderBook, type HoldersValue, type WalletFlag } from "../../../src/market/Holders.js"
import {
  CREATOR,
  Driver,
  everyAddress,
  LAUNCH_BLOCK,
  type Op,
  opsArbitrary,
  Reference,
  type Snapshot,
  supplyArbitrary
} from "./model.js"

const countFields = [
  "sniperCount",
  "bundlerCount",
  "insiderCount",
  "freshWalletCount",
  "proTraderCount",
  "partnerCount",
  "phishingCount"
] as const
const groupPctFields = [
  "sniperPct",
  "bundlerPct",
  "insiderPct",
  "freshWalletPct",
  "proTraderPct",
  "partnerPct",
  "phishingPct",
  "devPct",
  "fundedByCexPct"
] as const

interface Step {
  readonly book: HolderBook
  readonly ref: Reference
  readonly snapshot: Snapshot
  readonly answered: ReadonlyArray<WalletFlag> | undefined
  readonly op: Op
  readonly before: HoldersValue
  readonly after: HoldersValue
}

/** How the book is made: its top buffer's size, and whether the launch made the first pool. */
interface BookSetup {
  readonly topBufferSize: number
  readonly poolAtLaunch: boolean
}

/**
 * Replays `ops` into a fresh book (top buffer of `topBufferSize`: 10 makes nearly every top-ten exit
 * a rescan; the first pool made at launch, or seen with the first trade) and a reference, calling
 * `check` after every op; the first failing check fails the run.
 */
const replay = (
  supply: bigint,
  ops: ReadonlyArray<Op>,
  { poolAtLaunch, topBufferSize }: BookSetup,
  check: (step: Step) => boolean
): boolean => {
  const ref = new Reference(supply, poolAtLaunch)
  const book = new HolderBook(supply, CREATOR, poolAtLaunch ? LAUNCH_BLOCK : null, { isExcludedFromTop10: (a) => ref.excluded.has(a) }, { topBufferSize })
  const driver = new Driver(book, ref)
  let before = book.toWire()
  for (const op of ops) {
    const { snapshot, answered } = driver.apply(op)
    const after = book.toWire()
    if (!check({ book, ref, snapshot, answered, op, before, after })) return false
    before = after
  }
  return true
}

/** Long op sequences from the first run: the interesting states need a dozen holders and some sells. */
const options = { arbitrary: { runs: 150, size: 100 } }
/**
 * Top buffer sizes: 10 and 11 make nearly every top-ten exit a rescan; 32 is the default. The first
 * pool: made at launch (a bonding curve) or seen with the first trade (a pool added later).
 */
const setupArbitrary: Arbitrary.Arbitrary<BookSetup> = Arbitrary.schema(Schema.Struct({
  topBufferSize: Schema.Literals([10, 11, 32]),
  poolAtLaunch: Schema.Boolean
}))
const inputs: [Arbitrary.Arbitrary<bigint>, Arbitrary.Arbitrary<Array<Op>>, Arbitrary.Arbitrary<BookSetup>] = [
  supplyArbitrary,
  opsArbitrary,
  setupArbitrary
]

const sameFlags = (got: ReadonlyArray<WalletFlag>, want: Set<WalletFlag>): boolean =>
  got.join() === Reference.listed(want).join()

describe("HolderBook against a brute-force recomputation", () => {
  it.prop(
    "every ...Count never decreases from one step to the next",
    inputs,
    ([supply, ops, k]) =>
      replay(supply, ops, k, ({ before, after }) => countFields.every((f) => after[f] >= before[f])),
    options
  )

  it.prop(
    "each ...Count is the number of wallets that ever carried the flag",
    inputs,
    ([supply, ops, k]) =>
      replay(supply, ops, k, ({ ref, snapshot, after }) => {
        const expected = ref.expected(snapshot)
        return countFields.every((f) => after[f] === expected[f])
      }),
    options
  )

  it.prop(
    "each group share, devPct and fundedByCexPct equal a recomputation from balances and flags",
    inputs,
    ([supply, ops, k]) =>
      replay(supply, ops, k, ({ ref, snapshot, after }) => {
        const expected = ref.expected(snapshot)
        return groupPctFields.every((f) => after[f] === expected[f])
      }),
    options
  )

  it.prop(
    "top10Pct equals sorting every non-excluded balance, at every step",
    inputs,
    ([supply, ops, k]) =>
      replay(supply, ops, k, ({ ref, snapshot, after }) => after.top10Pct === ref.expected(snapshot).top10Pct),
    options
  )

  it.prop(
    "holderCount counts the non-excluded wallets with a positive balance",
    inputs,
    ([supply, ops, k]) =>
      replay(supply, ops, k, ({ book, ref, snapshot, after }) => {
        const expected = ref.holders(snapshot).length
        return book.holderCount() === expected && after.count === expected
      }),
    options
  )

  it.prop(
    "flagsOf and recordTrade's answer equal the flags recomputed from the log",
    inputs,
    ([supply, ops, k]) =>
      replay(supply, ops, k, ({ book, snapshot, answered, op }) => {
        if (op.kind === "trade" && !sameFlags(answered!, snapshot.flags.get(op.wallet)!)) return false
        return everyAddress.every((w) => sameFlags(book.flagsOf(w), snapshot.flags.get(w)!))
      }),
    options
  )

  it.prop(
    "every sniper is an insider, so the sniper share and count never exceed the insider ones",
    inputs,
    ([supply, ops, k]) =>
      replay(supply, ops, k, ({ book, after }) => {
        for (const w of everyAddress) {
          const flags = book.flagsOf(w)
          if (flags.includes("sniper") && !flags.includes("insider")) return false
        }
        return (
          after.sniperCount <= after.insiderCount &&
          Fixed.parse(after.sniperPct)! <= Fixed.parse(after.insiderPct)!
        )
      }),
    options
  )

  it.prop(
    "balances never go negative and match the running sum clamped at zero",
    inputs,
    ([supply, ops, k]) =>
      replay(supply, ops, k, ({ book, snapshot }) =>
        everyAddress.every((w) => {
          const balance = book.balanceOf(w)
          return balance >= 0n && balance === snapshot.balance.get(w)
        })
      ),
    options
  )
})
