/**
 * Simulated wallets and per-token balances. Wallets live in fixed-size pools per address family
 * and population, created on first use, so the same traders recur across tokens (and across the
 * EVM chains) while memory stays bounded.
 */
import type { Prng } from "./Prng.js"
import type { Population } from "./MarketConfig.js"
import type { Profile } from "./Names.js"

export class Wallet {
  /** Chains (one bit each) on which the wallet's labels, profiles and funding were announced. */
  announcedMask = 0

  constructor(
    readonly address: string,
    readonly population: Population,
    /** Trading terminal this wallet routes through, null for direct swaps. */
    readonly terminal: string | null,
    /** Labels published for the wallet (`whale`, `kol`, `partner`, ...). */
    readonly labels: ReadonlyArray<string>,
    readonly profileSource: string | null,
    readonly profile: Profile | null
  ) {}
}

/** A fixed number of wallet slots filled lazily; a slot can be recycled to bring in a new wallet. */
export class WalletPool {
  private readonly slots: Array<Wallet | undefined>

  constructor(size: number) {
    this.slots = new Array<Wallet | undefined>(size)
  }

  get size(): number {
    return this.slots.length
  }

  /** The wallet in slot `index`, undefined while the slot is empty. */
  at(index: number): Wallet | undefined {
    return this.slots[index]
  }

  put(index: number, wallet: Wallet): void {
    this.slots[index] = wallet
  }

  /** Empties a random slot so a brand-new wallet takes it on next use. */
  recycle(prng: Prng): void {
    this.slots[prng.int(this.slots.length)] = undefined
  }
}

/** Current token balances of one token's holders, with O(1) update and uniform random pick. */
export class HolderBook {
  readonly wallets: Array<Wallet> = []
  readonly amounts: Array<bigint> = []
  private readonly index = new Map<Wallet, number>()

  get size(): number {
    return this.wallets.length
  }

  balanceOf(wallet: Wallet): bigint {
    const i = this.index.get(wallet)
    return i === undefined ? 0n : this.amounts[i]!
  }

  holds(wallet: Wallet): boolean {
    return this.index.has(wallet)
  }

  add(wallet: Wallet, amount: bigint): void {
    const i = this.index.get(wallet)
    if (i === undefined) {
      this.index.set(wallet, this.wallets.length)
      this.wallets.push(wallet)
      this.amounts.push(amount)
    } else {
      this.amounts[i] = this.amounts[i]! + amount
    }
  }

  /** Removes `amount` (at most the balance, which callers guarantee) and drops emptied holders. */
  subtract(wallet: Wallet, amount: bigint): void {
    const i = this.index.get(wallet)
    if (i === undefined) return
    const left = this.amounts[i]! - amount
    if (left > 0n) {
      this.amounts[i] = left
      return
    }
    const last = this.wallets.length - 1
    const moved = this.wallets[last]!
    this.wallets[i] = moved
    this.amounts[i] = this.amounts[last]!
    this.index.set(moved, i)
    this.wallets.pop()
    this.amounts.pop()
    this.index.delete(wallet)
  }
}
