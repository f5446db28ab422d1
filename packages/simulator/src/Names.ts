/**
 * Token names, symbols, links and wallet profiles for the simulated market.
 */
import type { Events } from "@spot/domain"
import { contentId } from "./Addresses.js"
import type { Prng } from "./Prng.js"

const prefixes = [
  "Baby", "Giga", "Based", "Turbo", "Tiny", "Dark", "Golden", "Super", "Mega", "Little", "Sad", "Happy",
  "Angry", "Lucky", "Cosmic", "Degen", "Wild", "Frozen", "Royal", "Pixel", "Quantum", "Retro", "Chill", "Sigma"
] as const
const nouns = [
  "Frog", "Cat", "Dog", "Pepe", "Moon", "Rocket", "Whale", "Ape", "Hamster", "Penguin", "Otter", "Goose",
  "Banana", "Pizza", "Wizard", "Robot", "Dragon", "Panda", "Shiba", "Bonk", "Duck", "Tiger", "Bull", "Bear",
  "Chad", "Doge", "Llama", "Koala", "Sloth", "Capybara", "Mochi", "Taco", "Nugget", "Comet", "Ghost", "Rizz"
] as const
const handleWords = [
  "alpha", "degen", "trenches", "moon", "chart", "whale", "sniper", "ape", "based", "crypto", "onchain", "gem"
] as const
const personNames = [
  "Ansem", "Cobie", "Hsaka", "Gainzy", "Murad", "Orangie", "Cupsey", "Frank", "Jijo", "Euris", "Kev", "Loopify"
] as const

export interface GeneratedName {
  readonly name: string
  readonly symbol: string
  readonly slug: string
}

export const tokenName = (prng: Prng): GeneratedName => {
  const noun = prng.pick(nouns)
  if (prng.chance(0.35)) {
    const symbol = noun.toUpperCase()
    return { name: noun, symbol, slug: noun.toLowerCase() }
  }
  const prefix = prng.pick(prefixes)
  const symbol = (prefix.slice(0, 1) + noun).toUpperCase().slice(0, 8)
  return { name: `${prefix} ${noun}`, symbol, slug: `${prefix}${noun}`.toLowerCase() }
}

/** Metadata with socials on some tokens only; `socialsShare` sets how many. */
export const tokenMetadata = (prng: Prng, name: GeneratedName, socialsShare: number): Events.TokenMetadataFields => {
  const withSocials = prng.chance(socialsShare)
  const handle = `${name.slug}${prng.int(10_000)}`
  return {
    name: name.name,
    symbol: name.symbol,
    image: prng.chance(0.95) ? `https://ipfs.io/ipfs/${contentId(prng)}` : null,
    description: prng.chance(0.6) ? `${name.name} is the next ${name.symbol} on chain.` : null,
    website: withSocials && prng.chance(0.6) ? `https://${name.slug}.fun` : null,
    twitter: withSocials && prng.chance(0.9) ? `https://x.com/${handle}` : null,
    telegram: withSocials && prng.chance(0.5) ? `https://t.me/${handle}` : null,
    discord: withSocials && prng.chance(0.1) ? `https://discord.gg/${handle}` : null
  }
}

export interface Profile {
  readonly handle: string
  readonly displayName: string
  readonly avatar: string | null
  readonly twitter: string | null
  readonly telegram: string | null
  readonly farcaster: string | null
}

/** A KOL's X profile (the `twitter` identity source). */
export const kolProfile = (prng: Prng, index: number): Profile => {
  const person = prng.pick(personNames)
  const handle = `${person.toLowerCase()}_${prng.pick(handleWords)}${index}`
  return {
    handle,
    displayName: `${person} ${index}`,
    avatar: prng.chance(0.85) ? `https://pbs.twimg.com/profile_images/${handle}.jpg` : null,
    twitter: handle,
    telegram: prng.chance(0.3) ? handle : null,
    farcaster: null
  }
}

/** A partner-platform profile (the `partnerscan` identity source). */
export const partnerscanProfile = (prng: Prng, index: number): Profile => {
  const handle = `${prng.pick(handleWords)}${prng.pick(handleWords)}${index}`
  return {
    handle,
    displayName: `${handle.slice(0, 1).toUpperCase()}${handle.slice(1)}`,
    avatar: prng.chance(0.6) ? `https://partnerscan.example/avatars/${handle}.png` : null,
    twitter: prng.chance(0.5) ? handle : null,
    telegram: prng.chance(0.3) ? handle : null,
    farcaster: prng.chance(0.2) ? handle : null
  }
}
