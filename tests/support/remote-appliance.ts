// An appliance on the remote transport: a ClickHouse HTTP bridge on loopback over an engine
// directory of its own, and the appliance pointed at it (SVC_CLICKHOUSE_URL, unless `env` sets
// it). What every test of the remote path starts from; `dispose()` stops both and removes both
// directories.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestAppliance, type TestAppliance } from './appliance.ts';
import { startClickHouseHttpBridge, type ClickHouseHttpBridge, type ClickHouseHttpBridgeOptions } from './clickhouse-http-bridge.ts';

export interface RemoteTestAppliance {
  a: TestAppliance;
  bridge: ClickHouseHttpBridge;
  dispose(): Promise<void>;
}

export async function startRemoteTestAppliance(
  env: Record<string, string> | ((bridge: ClickHouseHttpBridge) => Record<string, string>) = {},
  bridgeOptions: Omit<ClickHouseHttpBridgeOptions, 'dataDir'> = {},
): Promise<RemoteTestAppliance> {
  const chDir = mkdtempSync(path.join(tmpdir(), 'remote-ch-'));
  const bridge = await startClickHouseHttpBridge({ ...bridgeOptions, dataDir: chDir });
  let a: TestAppliance;
  try {
    a = await startTestAppliance({ SVC_CLICKHOUSE_URL: bridge.url, ...(typeof env === 'function' ? env(bridge) : env) });
  } catch (err) {
    await bridge.close();
    rmSync(chDir, { recursive: true, force: true });
    throw err;
  }
  return {
    a,
    bridge,
    async dispose() {
      await a.dispose();
      await bridge.close();
      rmSync(chDir, { recursive: true, force: true });
    },
  };
}
