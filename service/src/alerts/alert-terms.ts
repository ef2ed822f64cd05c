// The alert vocabulary shared by the service and the renderer (which imports this file directly):
// no imports here, so the UI bundle takes the lists without any of the service's code.
export const SEVERITIES = ['informational', 'low', 'medium', 'high', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];
export const ACTION_KINDS = ['webhook', 'email', 'fractal', 'dictionary'] as const;
export type ActionKind = (typeof ACTION_KINDS)[number];
