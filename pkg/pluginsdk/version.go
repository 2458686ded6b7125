package pluginsdk

import "runtime"

func goVersion() string { return runtime.Version() }
