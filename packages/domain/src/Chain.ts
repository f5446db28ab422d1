/**
 * Chains the service serves, their native assets and address formats.
 */
export const chains = ["solana", "base", "bsc", "robinhood", "arc"] as const
export type Chain = (typeof chains)[number]

export const isChain = (value: string): value is Chain => (chains as ReadonlyArray<string>).includes(value)

export interface NativeAsset {
  readonly symbol: string
  /** Decimals of the native asset's base unit (lamports: 9, wei: 18). */
  readonly decimals: number
  /** Address used for the native asset when it is a pool's quote ("anchor"). */
  readonly address: string
}

export const nativeAsset: Readonly<Record<Chain, NativeAsset>> = {
  solana: { symbol: "SOL", decimals: 9, address: "So11111111111111111111111111111111111111112" },
  base: { symbol: "ETH", decimals: 18, address: "0x4200000000000000000000000000000000000006" },
  bsc: { symbol: "BNB", decimals: 18, address: "0xbb4cdb9cbd36b01bd1cbaebf2de08d9173bc095c" },
  robinhood: { symbol: "ETH", decimals: 18, address: "0x0000000000000000000000000000000000000000" },
  arc: { symbol: "USDC", decimals: 18, address: "0x3600000000000000000000000000000000000000" }
}

export type AddressFamily = "solana" | "evm"
export const addressFamily = (chain: Chain): AddressFamily => (chain === "solana" ? "solana" : "evm")

const base58Address = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/
const evmAddress = /^0x[0-9a-fA-F]{40}$/

/** True when `address` has the shape of an account address on `chain`. */
export const isAddressOn = (chain: Chain, address: string): boolean =>
  addressFamily(chain) === "solana" ? base58Address.test(address) : evmAddress.test(address)

/** The chain's address form for error messages ("... is not an arc address (0x followed by 40 hex digits)"). */
export const describeAddressOn = (chain: Chain): string =>
  `${chain === "arc" ? "an" : "a"} ${chain} address (${addressFamily(chain) === "solana" ? "base58, 32-44 characters" : "0x followed by 40 hex digits"})`

/** True when `address` has the shape of an address on any served chain. */
export const looksLikeAddress = (address: string): boolean => base58Address.test(address) || evmAddress.test(address)

/**
 * The canonical spelling of an address: EVM addresses are case-insensitive and kept lower-case;
 * Solana addresses are case-sensitive and kept as given.
 */
export const canonicalAddress = (chain: Chain, address: string): string =>
  addressFamily(chain) === "evm" ? address.toLowerCase() : address
