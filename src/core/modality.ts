/**
 * What a credential is, named once for the whole project, and the subsets each part works with.
 * Every layer takes its subset from here (drivers/ may import only src/core), so a modality added
 * or renamed is one change the compiler follows everywhere.
 *
 * - `BiometricModality`: a finger or an eye, what a scanner images and extraction reads;
 * - `ScannerModality`: what a scanner reads, a finger, an eye or a badge (a card number);
 * - `TemplateModality`: what the template cache stores and the identifier indexes: the three a
 *   scanner reads, plus `embedding` (a model's vector of a finger or an eye, the embedding slot);
 * - `ApiModality`: the attendance API's biometric items (operation 4): face, finger, iris.
 *
 * Tested in test/unit/terminal/recognizer.test.ts and test/unit/terminal/identifier.test.ts (each
 * modality recognized and identified); the subsets are checked by the compiler.
 */
export type Modality = 'face' | 'finger' | 'iris' | 'embedding' | 'badge';

export const BIOMETRIC_MODALITIES = ['finger', 'iris'] as const satisfies readonly Modality[];
export type BiometricModality = (typeof BIOMETRIC_MODALITIES)[number];

export const SCANNER_MODALITIES = [...BIOMETRIC_MODALITIES, 'badge'] as const satisfies readonly Modality[];
export type ScannerModality = (typeof SCANNER_MODALITIES)[number];

/**
 * In this order: the identifier packs a template's modality as its index here in two bits, and
 * the counts and the site's records list them so. Add at the end, and widen the identifier's
 * packing past four.
 */
export const TEMPLATE_MODALITIES = ['finger', 'iris', 'embedding', 'badge'] as const satisfies readonly Modality[];
export type TemplateModality = (typeof TEMPLATE_MODALITIES)[number];

export const API_MODALITIES = ['face', 'finger', 'iris'] as const satisfies readonly Modality[];
export type ApiModality = (typeof API_MODALITIES)[number];
