/**
 * What every row of the error table says, and `layerCodes`, which stamps one layer's rows with
 * that layer (each file of this folder is one layer's codes; ../error-codes.ts joins them).
 *
 * Tested in test/unit/core/error-codes.test.ts (every row of a layer's table stamped with that layer, one
 * layer per table).
 */
export type ErrorLayer =
  | 'core'
  | 'api'
  | 'server'
  | 'ingest'
  | 'store'
  | 'biometrics'
  | 'config'
  | 'upload'
  | 'ops'
  | 'site-sync'
  | 'terminal'
  | 'daemon'
  | 'setup'
  | 'cli'
  | 'console'
  | 'drivers'
  | 'embedded';

export interface ErrorCodeInfo {
  readonly layer: ErrorLayer;
  /** Doing the same thing again later can succeed (the default when the thrower does not say). */
  readonly retryable: boolean;
  /** What a person should do (the default when the thrower has no more specific hint). */
  readonly hint: string;
}

type CodeRow = Omit<ErrorCodeInfo, 'layer'>;

/** One layer's codes with their layer; the names stay literal so `ErrorCode` can be their union. */
export function layerCodes<L extends ErrorLayer, Rows extends Record<string, CodeRow>>(
  layer: L,
  rows: Rows,
): { readonly [K in keyof Rows]: CodeRow & { readonly layer: L } } {
  return Object.fromEntries(Object.entries(rows).map(([code, row]) => [code, { layer, ...row }])) as {
    readonly [K in keyof Rows]: CodeRow & { readonly layer: L };
  };
}
