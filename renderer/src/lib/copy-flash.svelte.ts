// A panel's copy buttons: copies a value and remembers which one (by key) for a check mark that goes
// after a moment, or as soon as another value of the panel is copied.
import { copyText } from './clipboard.ts';

export class CopyFlash {
  /** The key of the value just copied, null once the check mark is gone. */
  key = $state<string | null>(null);

  copy = async (key: string, text: string): Promise<void> => {
    if (await copyText(text)) {
      this.key = key;
      setTimeout(() => (this.key = this.key === key ? null : this.key), 1200);
    }
  };
}
