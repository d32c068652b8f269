// Which workflow code a worker loads (worker/workflow-bundle.ts): the prebuilt bundle made for its
// data converter, unless that bundle is missing or made from other compiled code than there is now.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { agentDataConverter, FAILURE_CONVERTER_PATH } from '../../runtime/data-converter';
import * as fc from 'fast-check';
import { PREBUILT_BUNDLES, bundleFor, bundleStaleness, inputsNow } from '../../worker/workflow-bundle';
import { inputsFileOf, writeInputs } from '../../worker/bundle-inputs';
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

  it('a bundle is stale when missing, without a record, or made from other bytes than a compiled file has now', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bundle-test-'));
    try {
      const code = path.join(dir, 'workflows');
      fs.mkdirSync(path.join(code, 'nested'), { recursive: true });
      const source = path.join(code, 'nested', 'agent.js');
      const bundle = { file: path.join(dir, 'workflow-bundle.js') };
      fs.writeFileSync(source, 'exports.a = 1;');
      fs.writeFileSync(`${source}.map`, '{}');
      assert.equal(bundleStaleness(bundle, [code]), 'is missing');

      fs.writeFileSync(bundle.file, '');
      assert.equal(bundleStaleness(bundle, [code]), 'has no record of its inputs');

      writeInputs(bundle.file, inputsNow(bundle, [code]));
      assert.equal(bundleStaleness(bundle, [code]), undefined);

      // tsc writing the same bytes again (a newer mtime) does not make it stale; a source map is no input.
      const later = Date.now() / 1000 + 60;
      fs.utimesSync(source, later, later);
      fs.writeFileSync(`${source}.map`, '{"changed":true}');
      assert.equal(bundleStaleness(bundle, [code]), undefined);

      // A hand edit with the old timestamp is still caught: contents, not times.
      const { mtime } = fs.statSync(source);
      fs.writeFileSync(source, 'exports.a = 2;');
      fs.utimesSync(source, mtime, mtime);
      assert.equal(bundleStaleness(bundle, [code]), 'was made from another workflows/nested/agent.js');

      fs.writeFileSync(source, 'exports.a = 1;');
      fs.writeFileSync(path.join(code, 'added.js'), '');
      assert.equal(bundleStaleness(bundle, [code]), 'does not contain workflows/added.js');
      fs.rmSync(path.join(code, 'added.js'));
      fs.rmSync(source);
      assert.equal(bundleStaleness(bundle, [code]), 'was made with workflows/nested/agent.js, which is gone');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a record that is not JSON, or not the shape written, means a stale bundle, never a crash', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bundle-test-'));
    try {
      const bundle = { file: path.join(dir, 'workflow-bundle.js') };
      fs.writeFileSync(bundle.file, '');
      fc.assert(
        fc.property(fc.oneof(fc.string(), fc.json()), (text) => {
          fs.writeFileSync(inputsFileOf(bundle.file), text);
          const stale = bundleStaleness(bundle, [path.join(dir, 'none')]);
          assert.equal(typeof stale, 'string');
        }),
        { numRuns: 200 },
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
