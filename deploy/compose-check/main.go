// compose-check loads a compose file the way `docker compose config` does, with the Compose
// Specification's own Go library (the one Docker Compose is built on): the .env file, variable
// interpolation (including `${VAR:?message}` errors), the specification's schema and the
// consistency checks (undefined services, secrets, volumes). It prints the resolved project as
// JSON, or the error on stderr and exits 1. No Docker engine needed: test/compose.test.ts runs it.
//
//	go run . [--env-file FILE]... [--profile NAME]... [--project-directory DIR] COMPOSE_FILE
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/compose-spec/compose-go/v2/cli"
)

type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

func main() {
	var envFiles, profiles repeated
	flag.Var(&envFiles, "env-file", "an environment file, as `docker compose --env-file` (default: .env of the project directory)")
	flag.Var(&profiles, "profile", "a profile to enable, as `docker compose --profile`")
	projectDir := flag.String("project-directory", "", "the project directory (default: the compose file's folder)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: compose-check [--env-file FILE]... [--profile NAME]... [--project-directory DIR] COMPOSE_FILE")
		os.Exit(2)
	}

	// The same options, in the same order, as docker compose's own project loading: the OS
	// environment wins over the env file, which wins over the defaults in the file.
	options, err := cli.NewProjectOptions(
		[]string{flag.Arg(0)},
		cli.WithWorkingDirectory(*projectDir),
		cli.WithOsEnv,
		cli.WithEnvFiles(envFiles...),
		cli.WithDotEnv,
		cli.WithProfiles(profiles),
		cli.WithConsistency(true),
		cli.WithResolvedPaths(true),
	)
	if err != nil {
		fail(err)
	}
	project, err := options.LoadProject(context.Background())
	if err != nil {
		fail(err)
	}
	out, err := project.MarshalJSON()
	if err != nil {
		fail(err)
	}
	os.Stdout.Write(append(out, '\n'))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err.Error())
	os.Exit(1)
}
