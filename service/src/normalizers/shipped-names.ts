// Names of the normalizers the appliance ships, for the service and the UI alike (no imports: the
// Evidence page finds the Windows one by this name).
export const WINDOWS_NORMALIZER_NAME = 'Windows event logs (.evtx)';
