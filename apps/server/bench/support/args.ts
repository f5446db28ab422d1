/** A benchmark's numeric option: `--name <number>` on its command line, else `fallback`. */
export const numberArg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? Number(process.argv[i + 1]) : fallback
}
