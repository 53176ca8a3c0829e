import { useState } from 'preact/hooks';
import { uploadFile } from '../api.js';
import { useAction } from '../hooks.js';
import { FormProblem } from './ui.js';

const kb = (n: number) => (n < 1024 ? `${n} bytes` : `${(n / 1024).toFixed(1)} KB`);

/** Uploads an image through `POST /files`, with its progress, and hands back the FileTracker id and URL. */
export function ImageUpload(props: {
  label: string;
  disabled: boolean;
  onUploaded: (id: string, url: string) => void;
}) {
  const action = useAction();
  const [progress, setProgress] = useState<{ loaded: number; total: number } | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const percent = progress && progress.total > 0 ? Math.round((progress.loaded / progress.total) * 100) : 0;
  return (
    <div>
      <label>
        {props.label}
        <input
          type="file"
          name="file"
          accept="image/png,image/jpeg,image/webp,image/svg+xml"
          disabled={props.disabled || action.busy}
          onChange={async (e) => {
            const file = (e.target as HTMLInputElement).files?.[0];
            if (!file) return;
            setDone(null);
            setProgress({ loaded: 0, total: file.size });
            const tracker = await action.run(() =>
              uploadFile(file, (loaded, total) => setProgress({ loaded, total })),
            );
            setProgress(null);
            if (tracker) {
              setDone(`Uploaded ${file.name} (${kb(tracker.bytes)}).`);
              props.onUploaded(tracker.id, tracker.url);
            }
          }}
        />
      </label>
      {progress && (
        <>
          <progress aria-label={`Uploading, ${percent}%`} value={progress.loaded} max={progress.total || 1} />
          <small aria-live="polite">Uploading… {percent}%</small>
        </>
      )}
      {done && <small role="status">{done}</small>}
      <FormProblem problem={action.problem} />
    </div>
  );
}
