import { api, unwrap } from '../api.js';
import { useAction } from '../hooks.js';
import { FormProblem } from './ui.js';

/** Uploads an image through `POST /files` and hands back the FileTracker id and URL. */
export function ImageUpload(props: {
  label: string;
  disabled: boolean;
  onUploaded: (id: string, url: string) => void;
}) {
  const action = useAction();
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
            const tracker = await action.run(() =>
              unwrap(
                api.POST('/files', {
                  body: { file } as never,
                  bodySerializer: () => {
                    const form = new FormData();
                    form.append('file', file);
                    return form;
                  },
                }),
              ),
            );
            if (tracker) props.onUploaded(tracker.id, tracker.url);
          }}
        />
      </label>
      {action.busy && <progress aria-label="Uploading" />}
      <FormProblem problem={action.problem} />
    </div>
  );
}
