/**
 * Field setup's codes: provisioning (`PROVISION_…`) and installed releases (`SETUP_…`).
 *
 * Tested in test/unit/core/error-codes.test.ts (this layer's codes joined into the one table, each
 * code in one layer only) and test/unit/core/errors.test.ts (every code has a layer and a hint).
 */
import { layerCodes } from './layer-codes.js';

export const SETUP_CODES = layerCodes('setup', {
  PROVISION_CHECK_FAILED: { retryable: false, hint: 'fix what the check names, then run provision again' },
  PROVISION_NOTHING_FOUND: {
    retryable: false,
    hint: 'check the cable and power (edge-agent devices lists what answers), or give --scanner family:path[:baud]',
  },
  PROVISION_TEMPLATE_KEY_MISMATCH: {
    retryable: false,
    hint: 'give the key the templates were stored with (--template-key-file, from the old secrets file or backup); to start over instead, delete the templates and sync them again from the site',
  },
  SETUP_NO_PREVIOUS_RELEASE: {
    retryable: false,
    hint: 'only one release is installed; to go back, install the older release (dpkg -i edge-agent_<version>_<arch>.deb, or install-service from its tarball)',
  },
  SETUP_NOT_INSTALLED: {
    retryable: false,
    hint: 'rollback works on a terminal installed from the .deb or with "edge-agent install-service" run from a release tarball (see docs/raspberry-pi.md); give --prefix if it was installed under another root',
  },
  SETUP_RELEASE_DAMAGED: {
    retryable: false,
    hint: 'download and unpack the release again (check it with: sha256sum -c SHA256SUMS), then run install-service from it',
  },
});
