// What a widget draws from a run: the service's own rule (service/src/dashboards/display.ts), so a
// chart switched by anyone shows at once as the service will answer it. Pure TypeScript.
export * from '../../../../service/src/dashboards/display.ts';
