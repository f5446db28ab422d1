/**
 * Text compared "ignoring case" (discovery's `symbolOrName`, `excludeSymbolOrName`,
 * `anchorSymbols` and `protocols`; the positions' `q`): lower-cased, with the i's of Turkic
 * alphabets read as a plain "i". `toLowerCase` alone turns "İ" (U+0130) into "i" + U+0307 and
 * keeps "ı" (U+0131) apart from "i", so "şiş" would not find a token named "ŞİŞ" and "ışık" not
 * one named "IŞIK". Folding all four (I, İ, i, ı) to "i" can only make a search find more.
 *
 * A stored text is already in Unicode normalization form C (ingest refuses any other:
 * `EventChecks`); a query term is not, so terms go through {@link foldQuery}, which composes
 * first ("e" + U+0301 finds "é").
 */
export const foldCase = (text: string): string => {
  const lower = text.toLowerCase()
  return turkicI.test(lower) ? lower.replace(dotlessI, "i").replace(dottedI, "i") : lower
}

/** A query term folded for comparison with {@link foldCase}d texts: composed (NFC) first. */
export const foldQuery = (term: string): string => foldCase(term.normalize("NFC"))

const turkicI = /[\u0131\u0307]/
const dotlessI = /\u0131/g
/** "i" + COMBINING DOT ABOVE: what "İ" lower-cases to. */
const dottedI = /i\u0307/g
