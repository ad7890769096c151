import { useState, type FormEvent } from "react";
import { useNavigate } from "react-router";

import { FieldErrors } from "../../../api/errors";
import { Button } from "../../../components/Button";
import { Field, fieldErrorsAt, inputClass, TextField } from "../../../components/Field";
import { PageHeader } from "../../../components/PageHeader";
import { useToast } from "../../../components/Toast";
import { useCreateProject } from "../hooks";

export function NewProjectPage() {
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const create = useCreateProject();
  const navigate = useNavigate();
  const toast = useToast();

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    create.mutate(
      { name, description },
      {
        onSuccess: (project) => void navigate(`/p/${project.slug}/runs`),
        onError: (error) => {
          if (!(error instanceof FieldErrors)) toast.error(error);
        },
      },
    );
  }

  return (
    <>
      <PageHeader title="New project" description="A project holds runs, datasets and reward functions; its members share them." />
      <form onSubmit={onSubmit} style={{ maxWidth: 480 }} aria-label="New project">
        <TextField label="Name" errors={fieldErrorsAt(create.error, "name")} value={name} onChange={setName} required maxLength={100} />
        <Field label="Description" help="Optional." errors={fieldErrorsAt(create.error, "description")}>
          {(props) => <textarea {...props} className={inputClass} rows={3} value={description} onChange={(e) => setDescription(e.target.value)} />}
        </Field>
        <Button type="submit" variant="primary" disabled={create.isPending}>
          Create project
        </Button>
      </form>
    </>
  );
}
