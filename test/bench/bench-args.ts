/** The command line of a benchmark: `--json`, and numeric flags `--name N` with their defaults. */
export function benchArgs(argv = process.argv.slice(2)): { json: boolean; flag: (name: string, fallback: number) => number } {
  return {
    json: argv.includes('--json'),
    flag: (name, fallback) => {
      const i = argv.indexOf(`--${name}`);
      return i >= 0 ? Number(argv[i + 1]) : fallback;
    },
  };
}
