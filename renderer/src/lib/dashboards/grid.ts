// The dashboard grid and how widgets make room for each other: the service's own module
// (service/src/dashboards/grid.ts), so the page shows a drag or resize exactly as the service
// will store it. It is pure TypeScript with no Node or DOM.
export * from '../../../../service/src/dashboards/grid.ts';
