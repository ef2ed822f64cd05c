// Files dropped anywhere on the window (the desktop shell's window or a browser tab): the shell
// puts them here and opens the import page, which takes them.
export const droppedFiles = $state<{ files: File[] }>({ files: [] });

export function takeDroppedFiles(): File[] {
  const files = droppedFiles.files;
  droppedFiles.files = [];
  return files;
}
