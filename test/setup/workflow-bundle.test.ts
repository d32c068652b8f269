// Which workflow code a worker loads (worker/workflow-bundle.ts): the prebuilt bundle made for its
// data converter, unless that bundle is missing or older than the compiled workflow code.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { agentDataConverter, FAILURE_CONVERTER_PATH } from '../../runtime/data-converter';
import { PREBUILT_BUNDLES, bundleFor, bundleStaleness } from '../../worker/workflow-bundle';
import { codecEnv, newKey } from '../helpers/codec';

describe('prebuilt workflow bundle choice', () => {
  it('a worker without a codec key gets the plain bundle, one with a key the encoding one', () => {
    assert.equal(bundleFor(agentDataConverter({}))?.file, PREBUILT_BUNDLES[0]!.file);
    const encrypted = bundleFor(agentDataConverter(codecEnv({ k1: newKey() }, 'k1')));
    assert.equal(encrypted?.file, PREBUILT_BUNDLES[1]!.file);
    assert.equal(encrypted?.failureConverterPath, FAILURE_CONVERTER_PATH);
    assert.match(encrypted!.file, /workflow-bundle\.encoded-failures\.js$/);
  });

  it('no prebuilt bundle for converter paths none was made with', () => {
    assert.equal(bundleFor({ payloadConverterPath: '/elsewhere/payload-converter.js' }), undefined);
    assert.equal(bundleFor({ failureConverterPath: '/elsewhere/failure-converter.js' }), undefined);
  });

  it('a bundle is stale when missing or older than a compiled file it is made of', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bundle-test-'));
    try {
      const code = path.join(dir, 'workflows');
      fs.mkdirSync(path.join(code, 'nested'), { recursive: true });
      const source = path.join(code, 'nested', 'agent.js');
      const bundle = path.join(dir, 'workflow-bundle.js');
      fs.writeFileSync(source, '');
      assert.equal(bundleStaleness(bundle, [code]), 'is missing');

      fs.writeFileSync(bundle, '');
      const t = Date.now() / 1000;
      fs.utimesSync(source, t - 10, t - 10);
      fs.utimesSync(bundle, t, t);
      assert.equal(bundleStaleness(bundle, [code]), undefined);

      fs.utimesSync(source, t + 10, t + 10); // `tsc` ran again after the bundle was made
      assert.match(bundleStaleness(bundle, [code]) ?? '', /^is older than .*nested\/agent\.js$/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
