// Who is signed in, and what they are looking at. `status` drives App.svelte: loading → signed-out
// (sign-in view) → signed-in (shell). Any 401 from the API drops back to signed-out without touching the
// route, so signing in again resumes the same view.
import { ApiError, errorMessage, get, onUnauthorized, post, type Me, type Selection } from './api.ts';

type Status = 'loading' | 'signed-out' | 'signed-in';

export const session = $state<{ status: Status; user: Me | null; notice: string | null }>({
  status: 'loading',
  user: null,
  notice: null,
});

onUnauthorized(() => {
  if (session.status === 'signed-in') session.notice = 'Your session has ended. Sign in again to continue.';
  session.status = 'signed-out';
  session.user = null;
});

export async function loadSession(): Promise<void> {
  try {
    const me = await get<Me>('/auth/me', { authRedirect: false });
    session.user = { ...me, selected: me.selected ?? null };
    session.status = 'signed-in';
    session.notice = null;
  } catch (err) {
    session.user = null;
    session.status = 'signed-out';
    if (!(err instanceof ApiError && err.status === 401)) {
      session.notice = `Could not check your session: ${errorMessage(err)}`;
    }
  }
}

/** Throws the API's sentence on failure (shown under the sign-in form). */
export async function signIn(username: string, password: string): Promise<void> {
  await post('/auth/login', { username, password }, { authRedirect: false });
  await loadSession();
  if (session.status !== 'signed-in') {
    throw new Error(
      session.notice ??
        'The service accepted the sign-in, but the browser did not send the session back. Check that this browser allows cookies for this address.',
    );
  }
}

export async function signOut(): Promise<void> {
  await post('/auth/logout', undefined, { authRedirect: false });
  session.user = null;
  session.notice = 'You have signed out.';
  session.status = 'signed-out';
}

export function setSelected(sel: Selection): void {
  if (session.user) session.user.selected = sel;
}
