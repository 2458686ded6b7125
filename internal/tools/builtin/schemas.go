package builtin

// Schemas use upstream's parameter names and defaults; descriptions are ours.

var readFileSchema = map[string]any{
	"name": ReadFile,
	"description": "Read a text file with line numbers and pagination. Use this instead of cat/head/tail in the terminal. " +
		"Output format: 'LINE_NUM|CONTENT'. Use offset and limit for large files; one read returns at most ~100K characters. " +
		"Binary files are refused.",
	"parameters": map[string]any{
		"type": "object",
		"properties": map[string]any{
			"path":   map[string]any{"type": "string", "description": "Path to the file to read (absolute, relative to the working directory, or ~/path)"},
			"offset": map[string]any{"type": "integer", "description": "Line number to start reading from (1-indexed, default: 1)", "default": 1, "minimum": 1},
			"limit":  map[string]any{"type": "integer", "description": "Maximum number of lines to read (default: 500, max: 2000)", "default": 500, "maximum": 2000},
		},
		"required": []any{"path"},
	},
}

var writeFileSchema = map[string]any{
	"name": WriteFile,
	"description": "Write content to a file, completely replacing existing content. Use this instead of echo/cat heredocs in the terminal. " +
		"Creates parent directories automatically. OVERWRITES the entire file: use 'patch' for targeted edits.",
	"parameters": map[string]any{
		"type": "object",
		"properties": map[string]any{
			"path":    map[string]any{"type": "string", "description": "Path to the file to write (created if missing, overwritten if it exists)"},
			"content": map[string]any{"type": "string", "description": "Complete content to write to the file"},
		},
		"required": []any{"path", "content"},
	},
}

var patchSchema = map[string]any{
	"name": Patch,
	"description": "Targeted find-and-replace edit in a file. Use this instead of sed/awk in the terminal. " +
		"old_string must match the file exactly (whitespace and indentation included) and exactly once unless replace_all=true; " +
		"include surrounding lines to make it unique. Returns a unified diff.",
	"parameters": map[string]any{
		"type": "object",
		"properties": map[string]any{
			"mode":        map[string]any{"type": "string", "enum": []any{"replace", "patch"}, "description": "Edit mode. Only 'replace' (the default) is supported: path + old_string + new_string.", "default": "replace"},
			"path":        map[string]any{"type": "string", "description": "File path to edit."},
			"old_string":  map[string]any{"type": "string", "description": "Exact text to find and replace. Must be unique in the file unless replace_all=true."},
			"new_string":  map[string]any{"type": "string", "description": "Replacement text. Pass an empty string to delete the matched text."},
			"replace_all": map[string]any{"type": "boolean", "description": "Replace all occurrences instead of requiring a unique match (default: false)", "default": false},
		},
		"required": []any{"path", "old_string", "new_string"},
	},
}

var searchFilesSchema = map[string]any{
	"name": SearchFiles,
	"description": "Search file contents or find files by name. Use this instead of grep/rg/find/ls in the terminal.\n\n" +
		"Content search (target='content'): regular-expression search inside files (RE2 syntax), optionally limited by file_glob. " +
		"Output modes: matching lines with line numbers, file paths only, or match counts.\n\n" +
		"File search (target='files'): find files by glob pattern (e.g. '*.py', '*config*'), newest first. " +
		".git, node_modules and binary files are skipped.",
	"parameters": map[string]any{
		"type": "object",
		"properties": map[string]any{
			"pattern":     map[string]any{"type": "string", "description": "Regex pattern for content search, or glob pattern (e.g. '*.py') for file search"},
			"target":      map[string]any{"type": "string", "description": "'content' searches inside files, 'files' searches for files by name ('grep' and 'find' are accepted as aliases)", "default": "content"},
			"path":        map[string]any{"type": "string", "description": "Directory or file to search in (default: the working directory)", "default": "."},
			"file_glob":   map[string]any{"type": "string", "description": "Only search files whose name matches this glob (e.g. '*.py')"},
			"limit":       map[string]any{"type": "integer", "description": "Maximum number of results to return (default: 50)", "default": 50},
			"offset":      map[string]any{"type": "integer", "description": "Skip the first N results, for pagination (default: 0)", "default": 0},
			"output_mode": map[string]any{"type": "string", "enum": []any{"content", "files_only", "count"}, "description": "Content search output: 'content' (matching lines), 'files_only' (paths), 'count' (matches per file)", "default": "content"},
		},
		"required": []any{"pattern"},
	},
}

var terminalSchema = map[string]any{
	"name": Terminal,
	"description": "Run a shell command with bash in the working directory and return its combined stdout and stderr and its exit code. " +
		"Commands run non-interactively (stdin is empty). Dangerous commands need the user's approval; some are never allowed. " +
		"Prefer the file tools for reading, writing, editing and searching files.",
	"parameters": map[string]any{
		"type": "object",
		"properties": map[string]any{
			"command": map[string]any{"type": "string", "description": "The command to execute"},
			"timeout": map[string]any{"type": "integer", "description": "Max seconds to wait (default: 180, max: 600). Returns as soon as the command finishes; on timeout the command and everything it started is killed.", "minimum": 1},
			"workdir": map[string]any{"type": "string", "description": "Working directory for this command (absolute, or relative to the session working directory). Defaults to the session working directory."},
		},
		"required": []any{"command"},
	},
}
