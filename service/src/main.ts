// Headless entry (`npm start`): read the environment, start the appliance, print the first-start
// facts once, and on SIGINT/SIGTERM stop cleanly (the ingest queue drains before exit).
import { startAppliance } from './appliance.ts';
import { ConfigError, loadConfig, redactedUrl } from './config.ts';

async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`Configuration error: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  const t0 = performance.now();
  const appliance = await startAppliance(config);
  const ms = Math.round(performance.now() - t0);
  const out = (s: string) => process.stdout.write(s + '\n');
  out(`Log Appliance ${appliance.context.version} ready in ${ms} ms`);
  out(`  UI and API:   ${appliance.url}/`);
  out(`  Ingest:       ${appliance.url}/api/v1/ingest  (also /_bulk and /v1/logs)`);
  out(`  Storage:      ${config.clickhouse ? `ClickHouse at ${redactedUrl(config.clickhouse.url)}` : 'embedded ClickHouse'}, data in ${config.dataDir}`);
  if (appliance.metricsUrl) out(`  Metrics:      ${appliance.metricsUrl}`);
  const first = appliance.firstStart;
  if (first) {
    out('');
    out('First start: an administrator and a "default" fractal were created.');
    out(`  Admin user:     ${first.adminUsername}`);
    if (first.adminPassword) {
      out(`  Admin password: ${first.adminPassword}   (shown once; also saved to ${config.dataDir}/initial-admin-password)`);
    } else {
      out('  Admin password: as set in SVC_ADMIN_PASSWORD');
    }
    out(`  Ingest token:   ${first.ingestToken}`);
    out(`  Try it:         curl -X POST ${appliance.url}/api/v1/ingest -H "Authorization: Bearer ${first.ingestToken}" -d '{"message":"hello"}'`);
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    out(`${signal} received: stopping (draining ingest first)...`);
    try {
      await appliance.stop();
      out('Stopped cleanly.');
      process.exit(0);
    } catch (err) {
      console.error('Stop failed:', err);
      process.exit(1);
    }
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((err) => {
  console.error(`Start-up failed: ${(err as Error).message}`);
  process.exit(1);
});
