// Dark (default) or light, remembered in localStorage and applied as <html data-theme="...">.

export type Theme = 'dark' | 'light';
const KEY = 'log-appliance.theme';

export function storedTheme(): Theme {
  try {
    return localStorage.getItem(KEY) === 'light' ? 'light' : 'dark';
  } catch {
    return 'dark';
  }
}

export function applyTheme(theme: Theme): void {
  document.documentElement.dataset.theme = theme;
  try {
    localStorage.setItem(KEY, theme);
  } catch {
    // Storage disabled (private mode, policy): the choice lasts for this page only.
  }
}
