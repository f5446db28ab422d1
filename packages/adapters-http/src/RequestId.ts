/**
 * `X-Request-ID` on every response (spec "Limits", response headers): the client's own id when it
 * sent a sane one, else a fresh UUID. "Sane" is 1–128 visible ASCII characters, so an id can be
 * logged and echoed without header injection or unbounded size.
 */
import { randomUUID } from "node:crypto"

export const maxRequestIdLength = 128

const isVisibleAscii = (value: string): boolean => {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i)
    if (c < 0x21 || c > 0x7e) return false
  }
  return true
}

export const fromHeader = (sent: string | undefined): string =>
  sent !== undefined && sent.length > 0 && sent.length <= maxRequestIdLength && isVisibleAscii(sent)
    ? sent
    : randomUUID()
