/**
 * Sensor resolution, known rather than guessed: every family's registry entry carries a table of
 * its models' resolutions (and the family's nominal one for a model it does not list), the
 * scanner looks its model up once it knows it, and every image it captures carries the figure.
 *
 * - Fingerprint sensors: dots (pixels) per inch at the platen, from the makers' datasheets.
 * - Iris cameras: ISO/IEC 19794-6 does not measure an iris image in dpi but by the iris diameter
 *   in pixels (its localization fields "iris diameter smallest/largest"; about 200 px across the
 *   iris is what its capture guidance asks for, 150 px the least); the table carries the
 *   camera's nominal diameter and, where known, its pixels per inch at the nominal distance.
 * - Badge readers read no image.
 */
export type SensorResolution =
  | { kind: 'dpi'; dpi: number }
  | { kind: 'iris'; irisDiameterPx: number; ppi: number | null }
  | { kind: 'none' };

export interface ResolutionTable {
  /** The family's resolution where the model is not in `models` (the family's common sensor). */
  readonly nominal: SensorResolution;
  /** By model name as the device reports it. */
  readonly models: Readonly<Record<string, SensorResolution>>;
}

/**
 * The resolution of `model`: its own entry, else the longest listed name it starts with (a module
 * reporting `R503-A` is an R503), else the family's nominal one.
 */
export function resolutionOf(table: ResolutionTable, model: string | null | undefined): SensorResolution {
  if (model) {
    const own = table.models[model];
    if (own) return own;
    const prefix = Object.keys(table.models)
      .filter((m) => model.toUpperCase().startsWith(m.toUpperCase()))
      .sort((a, b) => b.length - a.length)[0];
    if (prefix) return table.models[prefix]!;
  }
  return table.nominal;
}

/** Dots per inch of a fingerprint sensor's resolution (an error for anything else: a table mistake). */
export function dpiOf(resolution: SensorResolution): number {
  if (resolution.kind !== 'dpi') throw new TypeError(`a ${resolution.kind} resolution has no dpi`);
  return resolution.dpi;
}

/** No image: badge readers. */
export const NO_IMAGE: ResolutionTable = { nominal: { kind: 'none' }, models: {} };
