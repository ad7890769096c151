import { useLocation, useNavigate, useParams } from "react-router";

import { inputClass } from "../../../components/Field";
import { useProjects } from "../hooks";

const NEW_PROJECT = "__new__";

/** The project picker in the top bar: switching keeps the section (runs, datasets, ...). */
export function ProjectSwitcher() {
  const { slug } = useParams();
  const projects = useProjects();
  const navigate = useNavigate();
  const location = useLocation();
  if (!projects.data) return null;

  function onChange(value: string) {
    if (value === NEW_PROJECT) return void navigate("/projects/new");
    const section = slug ? (location.pathname.split("/")[3] ?? "runs") : "runs";
    // Run ids belong to one project: a switch lands on the section's list.
    void navigate(`/p/${value}/${section === "compare" ? "runs" : section}`);
  }

  return (
    <select aria-label="Project" className={inputClass} value={slug ?? ""} onChange={(e) => onChange(e.target.value)}>
      {slug ? null : <option value="">Choose a project</option>}
      {projects.data.map((project) => (
        <option key={project.slug} value={project.slug}>
          {project.name}
        </option>
      ))}
      <option value={NEW_PROJECT}>+ New project…</option>
    </select>
  );
}
